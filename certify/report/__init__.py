"""Report pages: the `index.html` that commands writing a report folder put in it.

page          the generic writer (title, sections of paragraphs, tables, figures and links;
              self-contained, offline, every string escaped)
environment   versions, platform, date and command line, as a section
files         what a folder holds: certificates with their verify commands, campaign folders, figures
suite_page    the page of `certify run`
campaign_page the page of `certify sample`
corpus_page   the page of `certify model --corpus`
"""
