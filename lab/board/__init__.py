"""The class board: a class's sentences using one word, shown by sense layer by layer."""
