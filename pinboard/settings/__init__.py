"""Settings: ``base`` holds the defaults; ``dev`` (embedded), ``test`` and ``prod`` adjust them.

Secrets and addresses come from the environment only.
"""
