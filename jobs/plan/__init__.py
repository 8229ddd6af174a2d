"""The job's plan: `pipeline` (the run: read, bucket, plan, write, then the report),
`udf` (the bucketed pandas UDF the executors run), `one_group` (one group's rows to the
core's planner and back), `guard` (the time and memory guard of a bucket), `session` (the
SparkSession and shipping the code to executors) and `summary` (the console summary of a
run). This wing imports `report`, `export`, `output`, `tables` and `settings` (and the
shared `jobs.fs`, `jobs.failures`, `jobs.together`), never `cli`."""
