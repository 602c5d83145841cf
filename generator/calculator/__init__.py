"""The quick calculator: one model on one shape or one existing machine (``specgen estimate``).

``model_source`` resolves a model reference, ``machine`` describes an existing machine,
``estimate`` answers one request, ``offload_report`` says an offload plan in a user's terms,
``report`` prints plans and catalog listings for the terminal and ``cli`` parses the estimate's
arguments. Kept light: nothing here imports pydantic, jsonschema, jinja2, ruamel or click.
"""
