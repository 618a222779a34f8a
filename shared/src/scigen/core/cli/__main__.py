from scigen.core.cli.main import main

main()
