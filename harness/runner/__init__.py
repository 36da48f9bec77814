"""harness.runner"""
