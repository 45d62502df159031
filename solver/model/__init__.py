"""The model: boards (real quadrants and custom ones), puzzles and their codes, the
rule options, robots' moves under the rules, and the verdict on a list of moves."""
