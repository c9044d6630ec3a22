"""Adversarial tests: the harness fails safely under fuzzing, faults, injection and stops."""
