"""The measurement lab: benchmarks, evaluations, calibration and their datasets.

A Django app installed by the local and test settings only. Production settings do not install
it, the production image does not contain it, and nothing under ``apps/`` imports it.
"""
