"""Rooms' requests: opening one, taking a seat, a room in the path."""

from __future__ import annotations

from marshmallow import fields, validate

from solver.play.robot import Strength
from workers.schemas import Seed, text

from ..shapes import GameOptions, Move
from . import Strict

NAME = fields.String(required=True, validate=[text, validate.Length(1, 40)],
                     metadata={"description": "the player's name, shown to the others (1 to 40 characters of text)",
                               "pattern": "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$"})


class NewRoom(Strict):
    name = NAME
    board = fields.String(load_default="random", validate=validate.Length(max=200), metadata={
        "description": "a spec, \"random\" (any 2013 board), \"beginner\" (no barrier sections) or \"1999\" "
                       "(a 1999 board)"})
    options = fields.Dict(load_default=dict, metadata={"shape": GameOptions})
    seed = Seed(metadata={"description": "fixes board, robots and every shuffle of the room's game (kept from "
                                         "the players); without one the server draws a secret"})
    mode = fields.String(load_default="game", validate=validate.OneOf(["game", "race"]), metadata={
        "description": "game: a game at the table (bids, the sand timer); race: everyone plays the same puzzles "
                       "for race_seconds, each at their own pace"})
    race_seconds = fields.Integer(load_default=180, validate=validate.Range(30, 1800), metadata={
        "description": "how long a race runs (mode race)"})


class Joining(Strict):
    name = NAME


class NewRobot(Strict):
    strength = fields.String(required=True, validate=validate.OneOf([s.value for s in Strength]), metadata={
        "description": "how well it plays, on the players' rating scale: beginner (about 1170), intermediate "
                       "(1610), advanced (1940) or master (2270)"})
    name = fields.String(validate=[text, validate.Length(1, 40)], metadata={
        "description": "its seat's name (1 to 40 characters of text); without one, \"Master robot\", "
                       "\"Master robot 2\"... by its strength", "pattern": NAME.metadata["pattern"]})


class RaceMove(Strict):
    moves = fields.List(fields.Raw(metadata={"shape": Move}), required=True, allow_none=True,
                        validate=validate.Length(max=200), metadata={
                            "description": "a solution to the racer's current puzzle; null skips it for nothing"})


class RoomPath(Strict):
    room_id = fields.String(required=True, metadata={"pattern": "^[A-Za-z0-9_-]{1,40}$"})


class RobotPath(RoomPath):
    name = fields.String(required=True, validate=validate.Length(1, 40), metadata={
        "description": "the robot's seat's name, as the room lists it"})
