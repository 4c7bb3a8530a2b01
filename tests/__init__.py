"""trialscore's test suite (a package, so that it wins over a top-level ``tests`` of any installed wheel)."""
