"""The papers' reproductions: the claims a sweep file makes, the runs behind them, and the HTML
pages and figures that set hopsim's numbers beside the papers'. The top layer below the CLI."""
