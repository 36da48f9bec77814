"""harness.loop"""
