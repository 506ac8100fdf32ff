"""tabpilot's benchmark harness: latency, snapshot size and coverage, memory, parallel sessions.

Run it with `.venv/bin/python -m bench` (add `--quick` for a short run); see bench/run.py.
"""
