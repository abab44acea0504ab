from frontier.cli.app import main

main()
