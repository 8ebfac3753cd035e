"""The review in a browser: a second front end over the same session engine as the terminal."""
