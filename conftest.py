"""Repository-level pytest configuration: register the scenario plugin for `pytest scenarios/`.

When the package is installed the `pytest11` entry point (named after the module) registers the
same plugin; pytest then sees it is already loaded and this line is a no-op.
"""
pytest_plugins = ["harness.runner.plugin"]
