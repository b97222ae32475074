"""HPCC's ns-3 simulator: its config imported as a scenario, a run exported as its outputs."""
