"""What the tests, the benchmarks and the tools share to drive the app from outside: a
served app and a protocol client (``served``), and the browser they open it in
(``chromium``). It imports neither ``tests`` nor ``bench``."""
