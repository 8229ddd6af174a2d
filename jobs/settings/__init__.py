"""The job's settings: `model` declares every setting of conf/planner.toml once (one dataclass
per section: type, default, range), `config` reads a TOML file into them (with every problem
named at once), `run` builds the run's settings from the config, once (the strategy catalog
and the core's settings objects). This wing imports no other wing of jobs/ (only the pure
core `assignors`)."""
