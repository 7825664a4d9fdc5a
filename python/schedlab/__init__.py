from schedlab._native import SchedlabError, run_json, reproduce_json, compare_json  # noqa
