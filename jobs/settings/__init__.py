"""The job's settings: `config` reads and checks conf/planner.toml (the TOML a run is given,
with every problem named at once), `limits` holds the ranges and defaults of its numeric
settings. This wing imports no other wing of jobs/ (only the shared `jobs.fs` and
`jobs.failures`, and the pure core `assignors`)."""
