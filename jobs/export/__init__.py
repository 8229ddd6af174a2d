"""The snapshot exporter: a live Kafka cluster to the planner's input tables.

`protocol` (the Kafka wire formats it reads), `client` (the connections and requests),
`snapshot` (what is collected, group by group), `libraries` (which client library a member
runs) and `writer` (the tables, written into an
output claimed as the planner claims its own). This wing imports `output` (and the shared
`jobs.fs` and `jobs.failures`), never `cli`, `plan` or `report`; `python -m
jobs.export_snapshot` runs it through `jobs.cli.export`.
"""
