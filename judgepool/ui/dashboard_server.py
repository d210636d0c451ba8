"""What `judgepool ui` serves: the dashboard (app.py) on Streamlit's own server, with the page
HTML that asks only this server and the warm-up of judgepool/ui/dashboard/server.py. `streamlit
run` finds `app` here and serves it; nothing else imports this file."""

import streamlit as st

from judgepool.ui.dashboard.server import APP, routes, warm_up

app = st.App(APP, routes=routes(), lifespan=warm_up)
