"""ppkit.ui: notebook widgets and views (they only display; the work is done by the layers below).

    index = ppkit.ui.index_folder("my-pdfs")            # or index_folder() for the reference 10-Ks
    ppkit.ui.CitedAnswer(index, "What is AMD's quick ratio for FY2022?")
    ppkit.ui.QueryExplorer(index, "...")                # the 200 -> 50 -> k funnel
    ppkit.ui.TreeView(ppkit.build_tree("AMD.md"))       # a document's skeleton tree
"""

from . import explore
from .answer_view import image_grid, images_markdown, show_answer
from .cited_answer import CitedAnswer, answer_widget
from .cues import retrieval_cues
from .dollars import escape_dollars, markdown, show_markdown
from .folder import find_documents, index_folder
from .shelf import plot_shelf, shelf_frame, show_funnel, show_page_beside
from .tables import columns_first
from .widgets import QueryExplorer, TreeView

__all__ = ["CitedAnswer", "QueryExplorer", "TreeView", "answer_widget", "columns_first", "escape_dollars", "explore",
           "find_documents", "image_grid", "images_markdown", "index_folder", "markdown", "plot_shelf", "retrieval_cues", "shelf_frame",
           "show_answer", "show_funnel", "show_markdown", "show_page_beside"]
