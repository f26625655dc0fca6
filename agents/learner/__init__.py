"""What a learned policy sees (belief, accusation and compact features), and a policy function as a player."""
