"""The pure sizing core: arithmetic over typed inputs.

No file reads, no printing, no logging, and no click / jinja2 / ruamel / pydantic imports here
(``tests/test_purity.py`` checks it). Bytes are integers; precisions are bits or ``Fraction``s.
"""
