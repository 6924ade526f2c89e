"""五十K (fifty-K): the rules engine and the hand aggregate of the game."""
