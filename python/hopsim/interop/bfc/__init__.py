"""BFC's ns-3 simulator: its config imported as a scenario, a run exported as its outputs, and its
stdout read back for comparison."""
