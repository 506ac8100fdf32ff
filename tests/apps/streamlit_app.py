"""A small Streamlit app for tabpilot's real-app tests: an expense book kept in the JSON file TP_APP_DATA.

Run by the tests as `streamlit run streamlit_app.py` on loopback, headless, usage statistics off.
"""

import json
import os
from pathlib import Path

import streamlit as st

DATA = Path(os.environ["TP_APP_DATA"])
CATEGORIES = ["Groceries", "Rent", "Transport", "Books", "Travel"]


def load() -> dict:
    if DATA.exists():
        return json.loads(DATA.read_text())
    return {"expenses": [], "settings": {"currency": "EUR", "alerts": False}}


def save(state: dict) -> None:
    DATA.write_text(json.dumps(state, indent=2))


state = load()
st.set_page_config(page_title="Expense book")
page = st.sidebar.radio("Section", ["Expenses", "Settings"])

if page == "Expenses":
    st.title("Expenses")
    with st.form("new_expense", clear_on_submit=True):
        description = st.text_input("Description")
        amount = st.number_input("Amount", min_value=0.0, step=1.0)
        category = st.selectbox("Category", CATEGORIES, index=None, placeholder="Choose a category")
        if st.form_submit_button("Add expense"):
            if not description or category is None:
                st.error("Give a description and a category.")
            else:
                state["expenses"].append({"description": description, "amount": amount, "category": category})
                save(state)
                st.success(f"Added {description}")
    total = sum(e["amount"] for e in state["expenses"])
    st.metric("Total spent", f"{total:.2f} {state['settings']['currency']}")
    for expense in state["expenses"]:
        st.markdown(f"- **{expense['description']}**: {expense['amount']:.2f} ({expense['category']})")
else:
    st.title("Settings")
    currency = st.selectbox(
        "Currency",
        ["EUR", "USD", "GBP", "CHF"],
        index=["EUR", "USD", "GBP", "CHF"].index(state["settings"]["currency"]),
    )
    alerts = st.checkbox("Monthly budget alerts", value=state["settings"]["alerts"])
    if st.button("Save settings"):
        state["settings"] = {"currency": currency, "alerts": alerts}
        save(state)
        st.success("Settings saved")
