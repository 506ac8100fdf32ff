"""The ``tabpilot`` command. Its hot path imports only light standard-library modules."""
