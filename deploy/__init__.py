"""Serving Context Lab from several app servers behind nginx: the shipped nginx site and
systemd unit, and the process management that runs them on one machine (``cluster``) and
in the tests (``postgres``, ``nginx``). The app itself (``lab``, ``ui``) starts no processes."""
