"""Short, copyable training scripts, one per RL library (docs/integrations.md); the tests run each with tiny sizes."""
