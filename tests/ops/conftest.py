"""The Airflow tests run with .venv-airflow's Python (`make test-airflow`); the project's .venv
has no Airflow (its Spark provider brings pyspark-client and pandas 3), so there they are not
collected at all."""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import tempfile

if importlib.util.find_spec("airflow") is None:
    collect_ignore_glob = ["test_*.py"]
else:
    # Airflow reads its home when first imported: never let a test touch ~/airflow.
    _home = tempfile.mkdtemp(prefix="planner-airflow-home-")
    atexit.register(shutil.rmtree, _home, ignore_errors=True)
    os.environ["AIRFLOW_HOME"] = _home
    os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
    os.environ["AIRFLOW__CORE__UNIT_TEST_MODE"] = "False"
