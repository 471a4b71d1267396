from tickler.adapters.cli import main

main()
