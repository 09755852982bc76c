"""Reports: text tables now; plotly figures and HTML reports later."""
