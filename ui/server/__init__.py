"""What a server runs beside the pages: the boot of every script run (``boot``), imports
one thread at a time (``imports``), the start-up warm-up (``warmup``) and the sweep of
closed sessions' memory (``memory``). Pages never import this package except
``imports.before_page``."""
