from frontier.cli.app import app, main

__all__ = ["app", "main"]
