print("apdu")
