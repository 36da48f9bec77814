"""Running a scenario: the engines behind one interface (engines/: the simulation, the real
controller), Karpenter's log of a run written and read, the pytest plugin (`pytest scenarios/`,
which sits with the CLI above every other package) and its shards."""
