"""harness.model"""
