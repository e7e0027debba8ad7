"""The agent: the loop, its state machine and guards, tool dispatch, context, events."""

from ..events import Event, State, parse_event
from .machine import TRANSITIONS, InvalidTransition, TurnStateMachine, allowed

__all__ = ["TRANSITIONS", "Event", "InvalidTransition", "State", "TurnStateMachine", "allowed", "parse_event"]
