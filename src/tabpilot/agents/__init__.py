"""The side panel's engine: the person's own agent CLIs, run by the daemon one turn at a time."""
