"""What a real-engine run produced, read back in the RunResult shape (observe.py, disruptions.py), when
it has settled (settle.py, over the time windows the objects hold), and which expectations the real
engine cannot answer."""
