"""A constructed OTA task database (no OTA task file is available) and a call script for it.

Two hotels (one sold out room, one in another city), an attraction, a flight and a train with
seat products on several dates, a paid flight order from the task file (untyped products, as
task files carry them) and another user's hotel order.
"""

from __future__ import annotations

from typing import Any

USER = "U100"


def _loc(address: str, lon: float, lat: float) -> dict[str, Any]:
    return {"address": address, "longitude": lon, "latitude": lat}


def _seat(pid: str, date: str, seat: str, price: float, qty: int) -> dict[str, Any]:
    return {"product_id": pid, "date": date, "seat_type": seat, "price": price, "quantity": qty}


def ota_environment() -> dict[str, Any]:
    return {
        "time": "2025-05-01 09:00:00",
        "user_id": USER,
        "weather": [{"city": "Hangzhou City", "category": "sunny", "datetime": "2025-05-02",
                     "temperature": [18, 27], "humidity": 60}],
        "location": [_loc("No. 1 Wulin Square, Gongshu District, Hangzhou", 120.165, 30.274)],
        "user_historical_behaviors": {"user id": USER, "residence": "Hangzhou"},
        "orders": {
            "OF1": {"order_id": "OF1", "order_type": "flight", "user_id": USER,
                    "store_id": "F1", "total_price": 800, "create_time": "2025-04-20 10:00:00",
                    "status": "paid",
                    "products": [_seat("S1", "2025-05-03", "economy", 800, 1)]},
            "OH9": {"order_id": "OH9", "order_type": "hotel", "user_id": "U999",
                    "store_id": "H1", "total_price": 500, "create_time": "2025-04-21 10:00:00",
                    "status": "paid", "products": []},
        },
        "hotels": {
            "H1": {"hotel_id": "H1", "hotel_name": "West Lake Lakeside Hotel", "score": 4.7,
                   "star_rating": 5, "location": _loc("18 Beishan Street, Xihu District, Hangzhou",
                                                      120.146, 30.259),
                   "tags": ["lake view", "spa"], "shop_type": "target",
                   "products": [
                       {"product_id": "R1", "date": "2025-05-02", "room_type": "King",
                        "price": 500, "quantity": 2},
                       {"product_id": "R2", "date": "2025-05-02", "room_type": "Twin",
                        "price": 450, "quantity": 0},
                   ]},
            "H2": {"hotel_id": "H2", "hotel_name": "Bund Riverside Inn", "score": 4.2,
                   "star_rating": 3, "location": _loc("5 Zhongshan East Road, Shanghai",
                                                      121.49, 31.24),
                   "tags": ["river view"],
                   "products": [{"product_id": "R9", "date": "2025-05-02",
                                 "room_type": "Queen", "price": 300, "quantity": 5}]},
        },
        "attractions": {
            "A1": {"attraction_id": "A1", "attraction_name": "Lingyin Temple",
                   "location": _loc("1 Fayun Lane, Xihu District, Hangzhou", 120.101, 30.241),
                   "description": "Buddhist temple in the hills", "score": 4.8,
                   "opening_hours": "07:00-18:00", "ticket_price": 45,
                   "products": [{"product_id": "T1", "date": "2025-05-02",
                                 "ticket_type": "Adult", "price": 45, "quantity": 3}]},
        },
        "flights": {
            "F1": {"flight_id": "F1", "flight_number": "MU5131", "departure_city": "Hangzhou",
                   "arrival_city": "Beijing",
                   "departure_airport_location": _loc("Xiaoshan Airport, Hangzhou", 120.43,
                                                      30.23),
                   "arrival_airport_location": _loc("Capital Airport, Beijing", 116.6, 40.08),
                   "departure_time": "08:00", "arrival_time": "10:10", "tags": ["meal"],
                   "products": [_seat("S1", "2025-05-03", "economy", 800, 3),
                                _seat("S2", "2025-05-04", "economy", 900, 2),
                                _seat("S3", "2025-05-05", "economy", 700, 4),
                                _seat("S4", "2025-05-03", "business", 2000, 1)]},
        },
        "trains": {
            "TR1": {"train_id": "TR1", "train_number": "G20", "departure_city": "Hangzhou",
                    "arrival_city": "Shanghai",
                    "departure_station_location": _loc("Hangzhou East Station", 120.21, 30.29),
                    "arrival_station_location": _loc("Shanghai Hongqiao Station", 121.32,
                                                     31.19),
                    "departure_time": "09:00", "arrival_time": "09:45", "tags": [],
                    "products": [_seat("C1", "2025-05-02", "second class", 73, 5),
                                 _seat("C2", "2025-05-02", "first class", 117, 1),
                                 _seat("C3", "2025-05-06", "second class", 60, 5)]},
        },
    }


def ota_calls() -> list[tuple[str, dict[str, Any]]]:
    u = USER
    hotel = {"hotel_id": "H1", "room_id": "R1", "user_id": u}
    flight = {"flight_id": "F1", "seat_id": "S1", "user_id": u, "date": "2025-05-03",
              "quantity": 2}
    return [
        ("search_hotel_order", {"user_id": u}),                       # no hotel order yet
        *[(f"get_ota_{k}_info", {f"{k}_id": i}) for k, i in
          (("hotel", "H1"), ("attraction", "A1"), ("flight", "F1"), ("train", "TR1"),
           ("hotel", "H404"), ("train", ""))],
        ("hotel_search_recommand", {"city_name": "Hangzhou"}),
        ("hotel_search_recommand", {"city_name": "Hangzhou", "key_words": ["spa", "lake"]}),
        ("hotel_search_recommand", {"city_name": "Reykjavik"}),
        ("attractions_search_recommend", {"city_name": "Hangzhou", "key_words": ["temple"]}),
        ("attractions_search_recommend", {"city_name": "Hangzhou"}),
        ("flight_search_recommend", {"departure": "Hangzhou", "destination": "Beijing"}),
        ("flight_search_recommend", {"departure": "Hangzhou", "destination": "Lhasa"}),
        ("train_ticket_search", {"departure": "Hangzhou", "destination": "Shanghai",
                                 "date": "2025-05-02"}),
        ("train_ticket_search", {"departure": "Hangzhou", "destination": "Shanghai",
                                 "date": "2025-05-09"}),
        ("train_ticket_search", {"departure": "Hangzhou", "destination": "Shanghai",
                                 "date": "05/02/2025"}),
        ("create_hotel_order", hotel),                                  # $1
        ("create_hotel_order", hotel),                                  # $2 (last room)
        ("create_hotel_order", hotel),                                  # sold out
        ("create_hotel_order", {**hotel, "room_id": "R2"}),             # stock 0
        ("create_hotel_order", {**hotel, "room_id": "R404"}),           # $3 empty, priced 0
        ("create_hotel_order", {**hotel, "user_id": "U999"}),
        ("create_hotel_order", {**hotel, "hotel_id": "H404"}),
        ("create_attraction_order", {"attraction_id": "A1", "ticket_id": "T1", "user_id": u,
                                     "date": "2025-05-02", "quantity": 2}),   # $4
        ("create_attraction_order", {"attraction_id": "A1", "ticket_id": "T1", "user_id": u,
                                     "date": "2025-05-02", "quantity": 2}),   # 1 left
        ("create_attraction_order", {"attraction_id": "A1", "ticket_id": "T1", "user_id": u,
                                     "date": "2025-05-09", "quantity": 1}),
        ("create_attraction_order", {"attraction_id": "A1", "ticket_id": "T1", "user_id": u,
                                     "date": "2025-05-02", "quantity": 0}),
        ("create_flight_order", flight),                                # $5
        ("create_flight_order", {**flight, "quantity": 5}),
        ("create_flight_order", {**flight, "seat_id": "S9"}),
        ("create_flight_order", {**flight, "quantity": "2"}),
        ("create_train_order", {"train_id": "TR1", "seat_id": "C1", "user_id": u,
                                "date": "2025-05-02", "quantity": 1}),   # $6
        ("create_train_order", {"train_id": "TR1", "seat_id": "C2", "user_id": u,
                                "date": "2025-05-02"}),
        ("get_ota_hotel_info", {"hotel_id": "H1"}),                     # stock after orders
        ("get_ota_flight_info", {"flight_id": "F1"}),
        ("pay_hotel_order", {"order_id": "$1"}),
        ("pay_hotel_order", {"order_id": "$1"}),
        ("pay_attraction_order", {"order_id": "$4"}),
        ("pay_flight_order", {"order_id": "$5"}),
        ("pay_train_order", {"order_id": "$6"}),
        ("pay_train_order", {"order_id": "$2"}),                        # any type is paid
        ("pay_flight_order", {"order_id": "NOPE"}),
        ("search_hotel_order", {"user_id": u}),
        ("search_hotel_order", {"user_id": u, "status": "unpaid"}),
        ("search_hotel_order", {"user_id": u, "date": "2025-05-02"}),
        ("search_hotel_order", {"user_id": u, "date": "2025/05/02"}),
        ("search_flight_order", {"user_id": u}),
        ("search_flight_order", {"user_id": u, "date": "2025-05-03"}),
        ("search_attraction_order", {"user_id": u, "status": None}),
        ("search_train_order", {"user_id": "U999"}),
        ("get_hotel_order_detail", {"order_id": "$1"}),
        ("get_flight_order_detail", {"order_id": "$1"}),
        ("get_attraction_order_detail", {"order_id": "$4"}),
        ("get_train_order_detail", {"order_id": "$6"}),
        ("modify_flight_order", {"order_id": "$5", "user_id": u, "new_date": "2025-05-04"}),
        ("search_flight_order", {"user_id": u, "status": "unpaid"}),
        ("modify_flight_order", {"order_id": "$5", "user_id": u, "new_date": "2025-05-05"}),
        ("pay_flight_order", {"order_id": "$5"}),
        ("modify_flight_order", {"order_id": "$5", "user_id": u, "new_date": "2025-05-05"}),
        ("modify_flight_order", {"order_id": "$5", "user_id": u, "new_date": "2025-05-09"}),
        ("modify_flight_order", {"order_id": "OF1", "user_id": u, "new_date": "2025-05-05"}),
        ("modify_flight_order", {"order_id": "$1", "user_id": u, "new_date": "2025-05-05"}),
        ("modify_flight_order", {"order_id": "$5", "user_id": "U999", "new_date": "2025-05-05"}),
        ("modify_train_order", {"order_id": "$6", "user_id": u, "new_date": "2025-05-06"}),
        ("modify_train_order", {"order_id": "$6", "user_id": u, "new_date": "2025-05-02"}),
        ("modify_train_order", {"order_id": "$5", "user_id": u, "new_date": "2025-05-06"}),
        ("get_ota_flight_info", {"flight_id": "F1"}),
        ("get_ota_train_info", {"train_id": "TR1"}),
        ("cancel_hotel_order", {"order_id": "$1", "user_id": u}),
        ("cancel_hotel_order", {"order_id": "$1", "user_id": u}),
        ("cancel_hotel_order", {"order_id": "$4", "user_id": u}),
        ("cancel_hotel_order", {"order_id": "OH9", "user_id": u}),      # owner not checked
        ("cancel_attraction_order", {"order_id": "$4", "user_id": u}),
        ("cancel_flight_order", {"order_id": "$5", "user_id": "U999"}),
        ("cancel_flight_order", {"order_id": "$5", "user_id": u}),
        ("cancel_train_order", {"order_id": "$6", "user_id": u}),
        ("get_ota_hotel_info", {"hotel_id": "H1"}),                     # stock not restored
        ("get_user_all_orders", {}),
        ("get_nearby", {"longitude": 120.165, "latitude": 30.274, "range": 30000}),
        ("address_to_longitude_latitude", {"address": "Hangzhou East Station"}),
        ("weather", {"address": "Hangzhou", "date_start": "2025-05-01",
                     "date_end": "2025-05-03"}),
    ]
