"""What a scenario is: its schema, the units it is written in, the core's registries of schemes, the
files it names and the machine resources it may use. The lowest layer above errors, progress and
interrupts: it imports nothing else of hopsim."""
