"""The Flask baseline of Scripts/bench sun-serve: a SUN verification endpoint the way
nfc-developer/sdm-backend builds one (Flask, pycryptodome), written for the bench. It verifies
the same URLs with sun_verify.verify and answers JSON; like sdm-backend it keeps no replay
counters, so it does less work per tap than apdu-sun-server. Served by gunicorn, one sync
worker per core."""
from flask import Flask, jsonify, request

from sun_verify import ZERO, verify

app = Flask(__name__)


@app.route("/")
def tap():
    try:
        uid, counter, file_data = verify("?" + request.query_string.decode(), ZERO, ZERO)
    except Exception as error:  # noqa: BLE001 - every refusal is a verdict here
        return jsonify(valid=False, reason=str(error)), 403
    return jsonify(valid=True, uid=uid.hex().upper(), counter=counter,
                   fileData=file_data.hex().upper() if file_data else None)
