"""The job's plan: `pipeline` (the run: read, bucket, plan, write), `udf` (the bucketed
pandas UDF the executors run), `one_group` (one group's rows to the core's planner and
back), `guard` (the time and memory guard of a bucket), `together` (small Spark jobs
started together), `session` (the SparkSession and shipping the code to executors) and
`summary` (the console summary of a run). This wing imports `output`, `tables` and
`settings` (and the shared `jobs.fs`), never `report`, `export` or `cli`."""
