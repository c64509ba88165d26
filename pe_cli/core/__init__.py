"""The bottom layer: errors, dtypes, names and limits, and the declaration of a table parameter.
Nothing here knows of any family of tables, and nothing here imports numpy or torch at import."""
