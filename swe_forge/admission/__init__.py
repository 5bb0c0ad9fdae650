"""The admission stage: candidates -> task manifests, or rejections with one reason each.

:mod:`~swe_forge.admission.admitter` decides one candidate (gold-patch guard, images, the
6-run gate, sufficiency, image audit, calibration, gold verification);
:mod:`~swe_forge.admission.stage` runs it over a list of candidates, handing each decision to
its output as soon as it is made; :mod:`~swe_forge.admission.output` is that output: task and
rejection files appended one synced line per decision, so that a killed run resumes where it
stopped.
"""
