"""Floodgate's ns-3 simulator: its config, topology and flow files imported as a scenario, a run
exported as its outputs."""
