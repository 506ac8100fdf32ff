"""A small Gradio app for tabpilot's real-app tests: a help desk keeping its tickets in TP_APP_DATA (JSON).

Usage: python gradio_app.py PORT. Loopback only, analytics off, fonts from the system (no network).
"""

import json
import os
import sys
from pathlib import Path

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
import gradio as gr

DATA = Path(os.environ["TP_APP_DATA"])
TEAMS = ["Billing", "Networking", "Hardware", "Accounts", "Security", "Printing"]


def load() -> list[dict]:
    return json.loads(DATA.read_text()) if DATA.exists() else []


def create(title: str, team: str | None, priority: str, urgent: bool) -> str:
    if not title or not team:
        return "A ticket needs a title and a team."
    tickets = load()
    ticket = {
        "id": len(tickets) + 1,
        "title": title,
        "team": team,
        "priority": priority,
        "urgent": urgent,
        "status": "open",
    }
    tickets.append(ticket)
    DATA.write_text(json.dumps(tickets, indent=2))
    return f"Created ticket #{ticket['id']} for {team}"


def look_up(number: str) -> str:
    for ticket in load():
        if str(ticket["id"]) == number.strip().lstrip("#"):
            return f"#{ticket['id']} {ticket['title']} — {ticket['team']}, {ticket['priority']} priority, {ticket['status']}"
    return f"No ticket {number}"


def close(number: str) -> str:
    tickets = load()
    for ticket in tickets:
        if str(ticket["id"]) == number.strip().lstrip("#"):
            ticket["status"] = "closed"
            DATA.write_text(json.dumps(tickets, indent=2))
            return f"Closed ticket #{ticket['id']}"
    return f"No ticket {number}"


theme = gr.themes.Default(font=["sans-serif"], font_mono=["monospace"])
with gr.Blocks(title="Help desk", analytics_enabled=False) as demo:
    gr.Markdown("# Help desk")
    with gr.Tabs():
        with gr.Tab("New ticket"):
            title = gr.Textbox(label="Title")
            team = gr.Dropdown(TEAMS, label="Team", value=None, filterable=True)
            priority = gr.Radio(["Low", "Normal", "High"], label="Priority", value="Normal")
            urgent = gr.Checkbox(label="Urgent")
            create_button = gr.Button("Create ticket", variant="primary")
            created = gr.Textbox(label="Outcome", interactive=False)
            create_button.click(create, [title, team, priority, urgent], created)
        with gr.Tab("Find ticket"):
            number = gr.Textbox(label="Ticket number")
            with gr.Row():
                find_button = gr.Button("Look up")
                close_button = gr.Button("Close ticket", variant="stop")
            found = gr.Textbox(label="Ticket", interactive=False)
            find_button.click(look_up, number, found)
            close_button.click(close, number, found)

if __name__ == "__main__":
    demo.launch(
        server_name="127.0.0.1", server_port=int(sys.argv[1]), share=False, inbrowser=False, theme=theme
    )
