from frontier.cli import main

main()
