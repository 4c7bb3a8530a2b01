"""``python -m trialscore``: the same command line as the ``trialscore`` script."""

from trialscore.cli import main

if __name__ == "__main__":  # not when a worker process (spawn, forkserver) imports the parent's main module
    main()
