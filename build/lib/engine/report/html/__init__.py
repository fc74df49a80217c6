"""The self-contained HTML report: gathered from the views, drawn with Plotly, packed into one page.

Entry point: `engine.report.html.page.write_html`.
"""
