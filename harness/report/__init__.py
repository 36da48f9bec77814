"""What a user reads of a run: the console report (console.py), the run page and its site
(runpage.py, site.py, templates/), and the timeline drawn as SVG."""
